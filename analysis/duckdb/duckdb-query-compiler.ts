import { DefaultQueryCompiler } from "kysely";

/**
 * DuckDB speaks PostgreSQL's dialect where Kysely's builders reach: `$n` parameters (Kysely's
 * default) and double-quoted identifiers, with embedded quotes doubled.
 */
export class DuckDBQueryCompiler extends DefaultQueryCompiler {
  protected override sanitizeIdentifier(identifier: string): string {
    return identifier.replaceAll('"', '""');
  }
}
