export default function fileTimes(source: AsyncIterable<unknown>): AsyncGenerator<string>;
