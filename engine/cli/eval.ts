import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("eval", "issue 10 (grading and evaluation)");
