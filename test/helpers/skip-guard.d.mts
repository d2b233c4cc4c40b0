export const ALLOWED_SKIPS: Record<string, { file: string; reason: string }>;
export function isAllowedSkip(file: string | undefined, reason: unknown): boolean;
export default function skipGuard(source: AsyncIterable<unknown>): AsyncGenerator<string>;
