/**
 * The Standard Schema v1 interface (https://standardschema.dev), declared
 * here as types only so valibot, zod and arktype schemas are all accepted
 * without depending on any of them.
 *
 * @module
 */

/** A schema any Standard Schema v1 library produces. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The standard properties. */
  readonly "~standard": StandardSchemaV1.Props<Input, Output>;
}

/** Types belonging to {@link StandardSchemaV1}. */
export declare namespace StandardSchemaV1 {
  /** The standard properties. */
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  }
  /** The result of validation. */
  export type Result<Output> = { readonly value: Output; readonly issues?: undefined } | {
    readonly issues: ReadonlyArray<Issue>;
  };
  /** One validation issue. */
  export interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
  }
  /** The input type of a schema. */
  export type InferInput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["input"];
  /** The output type of a schema. */
  export type InferOutput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["output"];
}
