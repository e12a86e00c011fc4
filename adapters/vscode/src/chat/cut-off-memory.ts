import type { TaskMemento } from "./open-task-memory.js";
import type { ChatItem } from "./chat-state.js";

/** Where the answers this editor saw cut off are kept (VS Code's globalState, shared by its windows). */
export const CUT_OFF_KEY = "dline.cutOffAnswers";
/** Tasks remembered; the oldest go first. */
const MAX_TASKS = 500;

/**
 * The answers the chat saw stop while they streamed, by task. The core keeps an answer's text
 * (and tells the model where it was cut) but not, in what it returns of a task, that it was
 * cut: once the task went on after it, only this memory marks it when the task is reopened.
 */
export class CutOffMemory {
  constructor(private readonly store: TaskMemento) {}

  ids(taskId: string): Set<string> {
    return new Set(this.read()[taskId] ?? []);
  }

  /** Remembers the chat's cut-off answers of the task (nothing is written when none is new). */
  remember(taskId: string, items: readonly ChatItem[]): void {
    const cut = items.flatMap((i) => (i.type === "message" && i.cutOff ? [i.id] : []));
    const all = this.read();
    const known = all[taskId] ?? [];
    const added = cut.filter((id) => !known.includes(id));
    if (!added.length) return;
    const { [taskId]: _previous, ...others } = all;
    const kept = Object.entries(others).slice(-(MAX_TASKS - 1));
    void this.store.update(CUT_OFF_KEY, { ...Object.fromEntries(kept), [taskId]: [...known, ...added] });
  }

  private read(): Record<string, string[]> {
    const value = this.store.get<unknown>(CUT_OFF_KEY);
    return value && typeof value === "object" ? (value as Record<string, string[]>) : {};
  }
}
