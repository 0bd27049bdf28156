import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("replay", "issue 6 (deterministic replay)");
