import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("sql", "issue 7 (analysis)");
