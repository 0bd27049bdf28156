import { notBuiltYet } from "../../events/cli/command.ts";

notBuiltYet("pretrain", "issue 4 (policy models)");
