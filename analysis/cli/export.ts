import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("export", "issue 7 (analysis)");
