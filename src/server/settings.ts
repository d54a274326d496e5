/**
 * The settings of `delayq serve`, read from the options table (src/core/option-table): each
 * option with a flag, given by that flag or its DELAYQ_* variable (the flag wins), parsed by
 * its row's type and bounds. A bad value becomes one problem naming the flag and the
 * variable; config.ts collects them all before it refuses to start.
 */
import { own } from '../core/dict.js';
import { kebab, parseOptionText, SERVE_OPTIONS, type NamedOption, type OptionSpec, type OptionValue } from '../core/option-table/index.js';

export interface Setting {
  readonly flag: string;
  readonly env: string;
  readonly description: string;
  /** The default as text ('' for none). */
  readonly default: string;
  /** A flag without a value (--allow-public): a boolean option. */
  readonly isSwitch: boolean;
}

/** The default as help and docs show it: '' for none. */
export function shownDefault(spec: OptionSpec): string {
  return spec.default === null ? '' : String(spec.default);
}

/** Every setting of `delayq serve`, keyed by its flag: the source of the CLI's serve options and of its --help. */
export const SETTINGS: Readonly<Record<string, Setting>> = Object.freeze(
  Object.fromEntries(
    SERVE_OPTIONS.map((option) => {
      const flag = option.flag ?? '';
      return [flag, { flag, env: option.env ?? '', description: option.description, default: shownDefault(option), isSwitch: option.type === 'boolean' }];
    }),
  ),
);

/** Flag values as commander hands them over (strings, or true for switches). */
export type ServerFlags = Readonly<Record<string, string | boolean | undefined>>;

/** Reads the settings from flags and variables, gathering the problems. */
export class SettingReader {
  readonly problems: string[] = [];

  constructor(
    private readonly flags: ServerFlags,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** "--max-batch / DELAYQ_MAX_BATCH", for messages. */
  where(option: OptionSpec): string {
    return `--${kebab(option.flag ?? '')} / ${option.env ?? ''}`;
  }

  /** What the flag or the variable says, or undefined when neither is given. */
  given(option: OptionSpec): string | boolean | undefined {
    const flag = option.flag === undefined ? undefined : own(this.flags, option.flag);
    return flag ?? (option.env === undefined ? undefined : own(this.env, option.env));
  }

  /** The value given, parsed (undefined when not given, or wrong: then a problem is recorded). */
  read(option: OptionSpec): OptionValue | undefined {
    const raw = this.given(option);
    if (raw === undefined) return undefined;
    if (typeof raw === 'boolean') return raw;
    const parsed = parseOptionText(option, raw);
    if ('problem' in parsed) {
      this.problems.push(`${this.where(option)}: ${parsed.problem}`);
      return undefined;
    }
    return parsed.value;
  }

  /** The value given or the default, as text (the string settings). */
  text(option: OptionSpec): string {
    const raw = this.given(option);
    return raw === undefined || typeof raw === 'boolean' ? shownDefault(option) : raw;
  }

  /** The typed value given, or the row's default; `fallback` stands in when it is wrong. */
  number(option: OptionSpec): number {
    const value = this.read(option);
    return typeof value === 'number' ? value : typeof option.default === 'number' ? option.default : Number.NaN;
  }

  bool(option: OptionSpec): boolean {
    const value = this.read(option);
    return typeof value === 'boolean' ? value : option.default === true;
  }

  list(option: OptionSpec): string[] {
    const value = this.read(option);
    return Array.isArray(value) ? [...(value as readonly string[])] : [];
  }

  problem(option: OptionSpec, what: string): void {
    this.problems.push(`${this.where(option)}: ${what}`);
  }
}

export type { NamedOption };
