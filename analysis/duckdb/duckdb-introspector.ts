import {
  type DatabaseIntrospector,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from "kysely";

interface ColumnRow {
  table_schema: string;
  table_name: string;
  table_type: string;
  column_name: string;
  data_type: string;
  is_nullable: string;
  column_default: string | null;
}

/** Lists schemas, tables, views and columns from DuckDB's information_schema. */
export class DuckDBIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      SELECT DISTINCT schema_name AS name FROM information_schema.schemata ORDER BY 1`
      .execute(this.db);
    return rows.map((r) => ({ name: r.name }));
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      SELECT c.table_schema, c.table_name, t.table_type, c.column_name, c.data_type,
             c.is_nullable, c.column_default
      FROM information_schema.columns c
      JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
      WHERE c.table_catalog = current_database()
      ORDER BY c.table_schema, c.table_name, c.ordinal_position`.execute(this.db);
    const tables = new Map<string, TableMetadata>();
    for (const r of rows) {
      if (!options.withInternalKyselyTables && r.table_name.startsWith("kysely_")) continue;
      const key = `${r.table_schema}.${r.table_name}`;
      const table = tables.get(key) ?? {
        name: r.table_name,
        schema: r.table_schema,
        isView: r.table_type === "VIEW",
        isForeign: false,
        columns: [],
      };
      tables.set(key, table);
      table.columns.push({
        name: r.column_name,
        dataType: r.data_type,
        isNullable: r.is_nullable === "YES",
        isAutoIncrementing: (r.column_default ?? "").startsWith("nextval("),
        hasDefaultValue: r.column_default !== null,
      });
    }
    return [...tables.values()];
  }
}
