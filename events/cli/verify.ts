import { notBuiltYet } from "./command.ts";

notBuiltYet("verify", "issue 2 (the event log)");
