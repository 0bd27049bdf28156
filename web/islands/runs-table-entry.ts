/** Browser entry of the runs-table island. */
import { hydrateIslands } from "./hydrate.ts";
import { RunsTable } from "./runs-table.tsx";

hydrateIslands("runs-table", RunsTable);
