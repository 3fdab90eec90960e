/** What /docs shows a reader as a schema's example: the first of `examples` (or `example`, as OpenAPI 3.0 writes one). */
export function docExample(schema: { examples?: unknown[]; example?: unknown }): unknown {
  return schema.examples?.[0] ?? schema.example;
}
