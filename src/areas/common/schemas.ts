import { Type } from 'typebox';

/** `{message}`: the small result object of actions. */
export const Message = Type.Object({ message: Type.String() });

export const NullableString = (options: Record<string, unknown> = {}) => Type.Union([Type.String(options), Type.Null()]);
export const NullableInteger = (options: Record<string, unknown> = {}) => Type.Union([Type.Integer(options), Type.Null()]);

/** What the checker said about a rendered file. */
export const CheckReport = Type.Object({
  checked: Type.Boolean({ description: 'false when the checker is not installed' }),
  ok: Type.Boolean(),
  checker: NullableString(),
  output: Type.String(),
});

export const DaemonState = Type.Object({
  name: Type.String(),
  running: Type.Boolean(),
  pid: NullableInteger(),
  started_at: NullableString(),
  version: Type.String(),
  config_file: NullableString(),
  starts: Type.Integer(),
  simulated: Type.Boolean(),
  last_error: NullableString(),
});
