import { GATE_ITEM_ID, type Gate, type GateItem } from '../schemas/gate.ts';

/** Which of the four reply forms the owner used. */
export type ReplyMode = 'rec' | 'rec_except' | 'tokens' | 'as_is';
/** Where an item's choice came from; `default` and `pending` mean the reply left it unanswered. */
export type ChoiceSource = 'rec' | 'pick' | 'keep' | 'default' | 'pending';
export type ChoiceStatus = 'pending' | 'approved' | 'overridden';

/** The resolved answer for one gate item. */
export interface Choice {
  readonly id: string;
  readonly chosen: string | null;
  readonly source: ChoiceSource;
  /** `pending` without a choice, `approved` when chosen == recommended, else `overridden`. */
  readonly status: ChoiceStatus;
  /** Whether a pick token in the reply named this item. */
  readonly owner_named: boolean;
}

/** A reply that parsed: one choice per gate item, in gate order. */
export interface ParsedReply {
  readonly ok: true;
  readonly mode: ReplyMode;
  readonly choices: readonly Choice[];
}

/** A reply that was refused as a whole: nothing of it is applied. */
export interface RefusedReply {
  readonly ok: false;
  readonly code: 'GATE_REPLY_UNPARSED' | 'GATE_REV_STALE';
  readonly detail: string;
}

export type ReplyOutcome = ParsedReply | RefusedReply;

const SEPARATORS = /[,;:=)]/g;
const PICK = /^([a-z]*[0-9]+)([a-z])$/;
const LONE_LETTER = /^[a-z]$/;
const YES_NO = new Set(['yes', 'no', 'y', 'n', 'ok']);
const REC_WORDS = new Set(['rec', 'all']);

/**
 * Splits a reply into lowercase tokens. An item id followed by a lone letter is joined
 * into one pick (`D1: b` -> `d1b`), since owners type the two apart as often as together.
 */
export function tokenizeReply(text: string): string[] {
  const raw = text.toLowerCase().replace(SEPARATORS, ' ').split(/\s+/).filter((token) => token !== '');
  const tokens: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const token = raw[i]!;
    const next = raw[i + 1];
    if (next !== undefined && GATE_ITEM_ID.test(token) && LONE_LETTER.test(next)) {
      tokens.push(token + next);
      i++;
    } else {
      tokens.push(token);
    }
  }
  return tokens;
}

/**
 * Checks the reply's gate revision, then parses it. A reply bound to another revision is
 * stale whatever it says: its ids may name items of a gate that no longer exists.
 */
export function answerGate(gate: Pick<Gate, 'gate_rev' | 'items'>, text: string, gateRev: number): ReplyOutcome {
  if (gateRev !== gate.gate_rev) {
    return { ok: false, code: 'GATE_REV_STALE', detail: `the reply is for gate_rev ${gateRev}, the gate is at gate_rev ${gate.gate_rev}` };
  }
  return parseReply(gate.items, text);
}

/** Parses one reply against the gate's items. Any doubt refuses the whole reply. */
export function parseReply(items: readonly GateItem[], text: string): ReplyOutcome {
  const read = readReply(items, text);
  return typeof read === 'string' ? unparsed(read) : resolve(items, read.mode, read.picks);
}

/**
 * Why a reply does not parse in the grammar alone, before any gate exists (a crew's
 * standing answer, checked before its lanes start), or null when it does. Whether the
 * items and options it picks exist is checked against each gate when it is applied.
 */
export function replyFormProblem(text: string): string | null {
  const read = readReply(null, text);
  return typeof read === 'string' ? read : null;
}

/** The reply's form and picks, or why not; `items` null checks the grammar only. */
function readReply(items: readonly GateItem[] | null, text: string): { mode: ReplyMode; picks: Map<string, string> } | string {
  const tokens = tokenizeReply(text);
  const [head, ...rest] = tokens;
  if (head === undefined) return 'the reply is empty';
  if (REC_WORDS.has(head)) {
    if (rest.length === 0) return { mode: 'rec', picks: new Map() };
    if (rest[0] !== 'except') return `"${head}" takes only "except <id><option>..." after it, got "${rest[0]}"`;
    if (rest.length === 1) return '"except" needs at least one <id><option> after it';
    const picks = readPicks(items, rest.slice(1));
    return typeof picks === 'string' ? picks : { mode: 'rec_except', picks };
  }
  if (head === 'as-is') {
    return rest.length === 0 ? { mode: 'as_is', picks: new Map() } : `"as-is" stands alone, got "${rest[0]}" after it`;
  }
  const picks = readPicks(items, tokens);
  return typeof picks === 'string' ? picks : { mode: 'tokens', picks };
}

function unparsed(detail: string): RefusedReply {
  return { ok: false, code: 'GATE_REPLY_UNPARSED', detail };
}

/** Every token as a pick of an existing item and option (any, with `items` null): item id -> key, or why not. */
function readPicks(items: readonly GateItem[] | null, tokens: readonly string[]): Map<string, string> | string {
  const picks = new Map<string, string>();
  for (const token of tokens) {
    if (YES_NO.has(token)) return `"${token}" is a bare yes/no, not a choice`;
    const match = PICK.exec(token);
    if (match === null) return `"${token}" is not an <id><option> pick`;
    const [, id, key] = match as unknown as [string, string, string];
    if (items !== null) {
      const item = items.find((candidate) => candidate.id === id);
      if (item === undefined) return `"${token}" names no item (no ${id})`;
      if (!item.options.some((option) => option.key === key)) {
        return `"${token}" names no option of ${id} (options ${item.options.map((o) => o.key).join(', ')})`;
      }
    }
    const earlier = picks.get(id);
    // The same pick twice is a repeat, not a conflict; two different ones cannot both apply.
    if (earlier !== undefined && earlier !== key) return `"${id}${earlier}" and "${token}" pick different options for ${id}`;
    picks.set(id, key);
  }
  return picks;
}

function resolve(items: readonly GateItem[], mode: ReplyMode, picks: ReadonlyMap<string, string>): ParsedReply {
  const choices = items.map((item): Choice => {
    const picked = picks.get(item.id);
    if (picked !== undefined) return choice(item, picked, 'pick', true);
    if (mode === 'rec' || mode === 'rec_except') return choice(item, item.recommended, 'rec', false);
    if (mode === 'as_is') {
      const keep = asIsKey(item);
      if (keep !== undefined) return choice(item, keep, 'keep', false);
    }
    // Unanswered: an auto item was announced with its default; an approval needs the owner.
    return item.kind === 'auto' ? choice(item, item.recommended, 'default', false) : choice(item, null, 'pending', false);
  });
  return { ok: true, mode, choices };
}

/** The option `as-is` takes: the item's keep key; for p1, approve-as-is is `a` when keep is unset. */
function asIsKey(item: GateItem): string | undefined {
  if (item.keep !== undefined) return item.keep;
  if (item.id === 'p1' && item.options.some((option) => option.key === 'a')) return 'a';
  return undefined;
}

function choice(item: GateItem, chosen: string | null, source: ChoiceSource, named: boolean): Choice {
  const status: ChoiceStatus = chosen === null ? 'pending' : chosen === item.recommended ? 'approved' : 'overridden';
  return { id: item.id, chosen, source, status, owner_named: named };
}
