/** Browser entry of the sql-console island. */
import { hydrateIslands } from "./hydrate.ts";
import { SqlConsole } from "./sql-console.tsx";

hydrateIslands("sql-console", SqlConsole);
