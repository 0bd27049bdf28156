import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("web", "issue 8 (dashboard)");
