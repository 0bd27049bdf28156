import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("train", "issue 5 (the engine)");
