/** Where the open task's id is kept (the window's workspaceState). */
export const OPEN_TASK_KEY = "dline.openTaskId";

/** The part of a vscode.Memento this uses. */
export interface TaskMemento {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

/**
 * Which task the chat had open in this window, kept across a window reload or an editor
 * restart: the chat reopens it at the first start of the core (a task that was waiting for an
 * answer then reads Interrupted, with Resume). Until that reopening was tried, the empty chat of
 * a starting window does not forget it.
 */
export class OpenTaskMemory {
  private tried = false;

  constructor(private readonly store: TaskMemento) {}

  /** The task to reopen, once per window (undefined after the first call, or when none was open). */
  toReopen(): string | undefined {
    if (this.tried) return undefined;
    this.tried = true;
    return this.store.get<string>(OPEN_TASK_KEY) || undefined;
  }

  /** The chat's open task changed (undefined: the start screen). */
  remember(taskId: string | undefined): void {
    if (!this.tried && !taskId) return;
    const value = taskId ?? "";
    if ((this.store.get<string>(OPEN_TASK_KEY) ?? "") === value) return;
    void this.store.update(OPEN_TASK_KEY, value);
  }
}
