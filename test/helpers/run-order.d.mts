export function testFiles(dir?: string): string[];
export function measuredSeconds(): Record<string, number>;
export function runOrder(files?: string[], seconds?: Record<string, number>): string[];
