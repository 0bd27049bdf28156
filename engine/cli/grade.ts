import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("grade", "issue 10 (grading and evaluation)");
