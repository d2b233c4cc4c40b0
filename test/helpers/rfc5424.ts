/** An independent reader of RFC 5424 messages for the syslog tests (not the code under test). */
/**
 * RFC 5424 section 6: HEADER SP STRUCTURED-DATA [SP MSG]. Answers the header fields, the SD elements with their
 * parameter values unescaped, and the MSG; throws where the text leaves the grammar.
 */
export function parseRfc5424(line: string) {
  const header = /^<(\d{1,3})>1 (\S+) (\S{1,255}) (\S{1,48}) (\S{1,128}) (\S{1,32}) /.exec(line);
  if (!header) throw new Error(`bad header: ${JSON.stringify(line.slice(0, 80))}`);
  for (const field of header.slice(2)) if (!/^[\x21-\x7e]+$/.test(field)) throw new Error(`non-printable header field ${JSON.stringify(field)}`);
  let at = header[0].length;
  const elements: { id: string; params: [string, string][] }[] = [];
  if (line[at] === '-') {
    at++;
  } else {
    while (line[at] === '[') {
      at++;
      const id = /^[^= \]"]{1,32}/.exec(line.slice(at));
      if (!id) throw new Error(`bad SD-ID at ${at}`);
      at += id[0].length;
      const params: [string, string][] = [];
      while (line[at] === ' ') {
        at++;
        const name = /^[^= \]"@]{1,32}/.exec(line.slice(at));
        if (!name || line[at + name[0].length] !== '=' || line[at + name[0].length + 1] !== '"') throw new Error(`bad SD-PARAM at ${at}`);
        at += name[0].length + 2;
        let value = '';
        for (;;) {
          const character = line[at];
          if (character === undefined) throw new Error('unterminated PARAM-VALUE');
          if (character === '\\' && ['"', '\\', ']'].includes(line[at + 1])) {
            value += line[at + 1];
            at += 2;
            continue;
          }
          // An unescaped `]` or `"` inside a value would end it early: the grammar requires them escaped.
          if (character === ']') throw new Error(`unescaped ] in PARAM-VALUE at ${at}`);
          at++;
          if (character === '"') break;
          value += character;
        }
        params.push([name[0], value]);
      }
      if (line[at] !== ']') throw new Error(`SD-ELEMENT not closed at ${at}: ${JSON.stringify(line.slice(at, at + 20))}`);
      at++;
      elements.push({ id: id[0], params });
    }
    if (elements.length === 0) throw new Error('no structured data');
  }
  if (at < line.length && line[at] !== ' ') throw new Error(`no space before MSG at ${at}`);
  return { priority: Number(header[1]), timestamp: header[2], hostname: header[3], app: header[4], procid: header[5], msgid: header[6], elements, msg: line.slice(at + 1) };
}

