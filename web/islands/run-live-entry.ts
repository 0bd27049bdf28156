/** Browser entry of the run-live island. */
import { hydrateIslands } from "./hydrate.ts";
import { RunLive } from "./run-live.tsx";

hydrateIslands("run-live", RunLive);
