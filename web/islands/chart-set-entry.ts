/** Browser entry of the chart-set island. */
import { hydrateIslands } from "./hydrate.ts";
import { ChartSet } from "./chart-set.tsx";

hydrateIslands("chart-set", ChartSet);
