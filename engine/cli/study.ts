import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("study", "issue 9 (reproduction study)");
