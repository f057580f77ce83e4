/**
 * What a sed script does beyond its input and output: the files its `w`/`W` commands and `s///w`
 * flag write (GNU sed opens them when it reads the script, so a file is created or emptied even
 * if no line ever reaches the command), the files `r`/`R` read, and whether `e` or `s///e` runs
 * commands. Read as GNU sed 4 reads a script (its manual, "sed scripts"); the tests hold it to the
 * real sed: the files it creates and what `--sandbox` refuses.
 */

export interface SedScript {
  writes: string[];
  reads: string[];
  /** An `e` command or `s///e`: the script runs commands. */
  runs: boolean;
  /** Why the script could not be read to its end; what was read before stays listed. */
  error?: string;
}

/** Commands that take no argument. */
const BARE = new Set('=dDgGhHnNpPxzF'.split(''));

class Reader {
  i = 0;
  readonly out: SedScript = { writes: [], reads: [], runs: false };

  constructor(readonly text: string) {}

  get c(): string | undefined {
    return this.text[this.i];
  }

  /** Spaces and tabs (not newlines). */
  blanks(): void {
    while (this.c === ' ' || this.c === '\t') this.i++;
  }

  /** The rest of the line (a filename, an `e` command), the newline left in place. */
  restOfLine(): string {
    const end = this.text.indexOf('\n', this.i);
    const stop = end < 0 ? this.text.length : end;
    const rest = this.text.slice(this.i, stop);
    this.i = stop;
    return rest;
  }

  /** A label or version: up to `;`, a blank or the end of the line (what follows a blank is the next command). */
  label(): void {
    while (this.c !== undefined && !/[\n; \t]/.test(this.c)) this.i++;
  }

  /** A bracket expression from just after its `[`; the delimiter is plain text inside it. */
  bracket(): void {
    if (this.c === '^') this.i++;
    if (this.c === ']') this.i++;
    while (this.c !== undefined && this.c !== ']') {
      if (this.c === '[' && /[:=.]/.test(this.text[this.i + 1] ?? '')) {
        const close = this.text.indexOf(`${this.text[this.i + 1]}]`, this.i + 2);
        if (close < 0) throw new Error('an unterminated character class');
        this.i = close + 2;
      } else this.i++;
    }
    if (this.c === undefined) throw new Error('an unterminated bracket expression');
    this.i++;
  }

  /** Text up to the unescaped delimiter, which is consumed; `regex` honours bracket expressions. */
  delimited(delim: string, regex: boolean): void {
    for (;;) {
      const c = this.c;
      if (c === undefined) throw new Error(`an unterminated \`${delim}\``);
      this.i++;
      if (c === delim) return;
      if (c === '\\') {
        if (this.c === undefined) throw new Error('a trailing backslash');
        this.i++;
      } else if (c === '\n' && regex) throw new Error('a newline inside a regular expression');
      else if (c === '[' && regex) this.bracket();
    }
  }

  /** One address (a line number, a step, `$`, `/re/` or `\cREc` with its flags), if one stands here. */
  address(second: boolean): boolean {
    const c = this.c;
    if (c === undefined) return false;
    if (/[0-9]/.test(c) || (second && (c === '+' || c === '~'))) {
      this.i++;
      while (/[0-9]/.test(this.c ?? '')) this.i++;
      if (!second && this.c === '~') {
        this.i++;
        while (/[0-9]/.test(this.c ?? '')) this.i++;
      }
      return true;
    }
    if (c === '$') {
      this.i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      this.i++;
      let delim = '/';
      if (c === '\\') {
        delim = this.c ?? '';
        if (delim === '' || delim === '\n' || delim === '\\') throw new Error('a bad address delimiter');
        this.i++;
      }
      this.delimited(delim, true);
      while (this.c === 'I' || this.c === 'M') this.i++;
      return true;
    }
    return false;
  }

  /** After a command: blanks, then `;`, a newline, `}`, `#` or the end. */
  end(command: string): void {
    this.blanks();
    const c = this.c;
    if (c === undefined || c === '\n' || c === ';') {
      if (c !== undefined) this.i++;
      return;
    }
    if (c === '}' || c === '#') return;
    throw new Error(`unexpected \`${c}\` after the \`${command}\` command`);
  }

  /** The two delimited parts of `s` (a regular expression, then its replacement) or `y`. */
  pair(cmd: 's' | 'y'): void {
    const delim = this.c;
    if (delim === undefined || delim === '\n' || delim === '\\')
      throw new Error(`a bad \`${cmd}\` delimiter`);
    this.i++;
    this.delimited(delim, cmd === 's');
    this.delimited(delim, false);
  }

  substitute(): void {
    this.pair('s');
    for (;;) {
      this.blanks();
      const c = this.c;
      if (c !== undefined && /[gpiImM0-9]/.test(c)) this.i++;
      else if (c === 'e') {
        this.out.runs = true;
        this.i++;
      } else if (c === 'w') {
        this.i++;
        this.file(this.out.writes);
        return;
      } else {
        this.end('s');
        return;
      }
    }
  }

  /** A filename argument, to the end of the line (`;` and `}` included, as sed reads it). */
  file(into: string[]): void {
    this.blanks();
    const name = this.restOfLine();
    if (name === '') throw new Error('a missing filename');
    into.push(name);
  }

  /** The text of `a`, `i`, `c` (and `e`'s command): one line, or lines continued by a trailing backslash. */
  appendedText(): void {
    this.blanks();
    // `a\` and a newline: the text is on the lines after; anything else after the backslash (a
    // blank too) is the text itself, to the end of its line.
    if (this.c === '\\') {
      this.i++;
      if (this.text[this.i] === '\n') this.i++;
    }
    const start = this.i;
    while (this.c !== undefined && this.c !== '\n') {
      if (this.c === '\\') this.i++;
      this.i++;
    }
    // Where the text went on over a trailing backslash, the lines after it are also read as
    // commands: sed's own reading of a backslash there (`c\\` and a newline) may end the text
    // sooner, so what they would write or run counts as well.
    const lines = this.text.slice(start, this.i).split('\n').slice(1);
    for (const line of lines) {
      const also = new Reader(line).read();
      this.out.writes.push(...also.writes);
      this.out.reads.push(...also.reads);
      if (also.runs) this.out.runs = true;
    }
  }

  command(): void {
    if (this.address(false)) {
      this.blanks();
      if (this.c === ',') {
        this.i++;
        this.blanks();
        if (!this.address(true)) throw new Error('a missing second address');
      }
    }
    this.blanks();
    while (this.c === '!') {
      this.i++;
      this.blanks();
    }
    const cmd = this.c;
    if (cmd === undefined) throw new Error('a missing command');
    this.i++;
    this.argument(cmd);
  }

  /** What follows the command letter `cmd`, through the end of the command. */
  argument(cmd: string): void {
    if (cmd === '{') return;
    if (BARE.has(cmd) || cmd === '}') {
      this.end(cmd);
    } else if (cmd === '#') {
      this.restOfLine();
    } else if (':btTv'.includes(cmd)) {
      this.blanks();
      this.label();
    } else if ('qQlL'.includes(cmd)) {
      this.blanks();
      while (/[0-9]/.test(this.c ?? '')) this.i++;
      this.end(cmd);
    } else if ('aic'.includes(cmd)) {
      this.appendedText();
    } else if (cmd === 'r' || cmd === 'R') {
      this.file(this.out.reads);
    } else if (cmd === 'w' || cmd === 'W') {
      this.file(this.out.writes);
    } else if (cmd === 'e') {
      // Its command is read as the text of `a` is: a trailing backslash continues it.
      this.out.runs = true;
      this.appendedText();
    } else if (cmd === 's') {
      this.substitute();
    } else if (cmd === 'y') {
      this.pair('y');
      this.end(cmd);
    } else throw new Error(`an unknown command \`${cmd}\``);
  }

  read(): SedScript {
    try {
      for (;;) {
        while (this.c !== undefined && /[ \t\n;]/.test(this.c)) this.i++;
        if (this.c === undefined) return this.out;
        this.command();
      }
    } catch (error) {
      this.out.error = `${(error as Error).message} at character ${this.i + 1}`;
      return this.out;
    }
  }
}

/** Reads a whole sed script (every `-e` joined by newlines, as sed joins them). */
export function readSedScript(text: string): SedScript {
  return new Reader(text).read();
}
