// A Chat message's (or delta's) content as text and reasoning. OpenAI sends a string; some
// compatible servers send an array of parts: Mistral's Magistral models answer with
// `{type: "thinking", thinking: [{type: "text", text}]}` then `{type: "text", text}`.
import { nameKind } from './answer-names.ts';

export interface ContentPiece {
  kind: 'text' | 'reasoning';
  text: string;
}

/** What the content holds, in order, adjacent pieces of one kind joined; a part of another kind is named by its type. */
export function chatContentPieces(content: unknown, dropped: string[]): ContentPiece[] {
  if (typeof content === 'string') return content === '' ? [] : [{ kind: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const pieces: ContentPiece[] = [];
  for (const part of content) {
    const piece = pieceOf(part, dropped);
    if (piece === null) continue;
    const last = pieces[pieces.length - 1];
    if (last?.kind === piece.kind) last.text += piece.text;
    else pieces.push(piece);
  }
  return pieces;
}

function pieceOf(part: unknown, dropped: string[]): ContentPiece | null {
  const p = (part ?? {}) as { type?: unknown; text?: unknown; thinking?: unknown };
  if (p.type === 'text') return typeof p.text === 'string' && p.text !== '' ? { kind: 'text', text: p.text } : null;
  if (p.type === 'thinking') {
    const text = thinkingText(p.thinking, dropped);
    return text === '' ? null : { kind: 'reasoning', text };
  }
  nameKind(typeof p.type === 'string' ? p.type : 'content', dropped);
  return null;
}

/** A thinking part's text: its text parts (Mistral's shape), or a string; other parts in it named. */
function thinkingText(thinking: unknown, dropped: string[]): string {
  if (typeof thinking === 'string') return thinking;
  if (!Array.isArray(thinking)) return '';
  return thinking.map((inner) => {
    const p = (inner ?? {}) as { type?: unknown; text?: unknown };
    if (p.type === 'text' && typeof p.text === 'string') return p.text;
    nameKind(typeof p.type === 'string' ? `thinking.${p.type}` : 'thinking', dropped);
    return '';
  }).join('');
}
