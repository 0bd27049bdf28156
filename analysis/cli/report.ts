import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("report", "issue 7 (analysis)");
