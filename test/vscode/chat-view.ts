/**
 * The VS Code chat model's state reduced to the view every client's fold is compared on
 * (test/conformance/fold/chat-fixture.ts).
 */
import type { ChatState } from "../../adapters/vscode/src/chat/chat-state.js";
import { editView, type ChatView } from "../conformance/fold/chat-fixture.js";

const upper = (prefix: string, name: string) =>
  `${prefix}${name === "none" || name === "unknown" ? "UNSPECIFIED" : name.toUpperCase()}`;

export function viewOfChatState(state: ChatState): ChatView {
  return {
    status: upper("TASK_STATUS_", state.status),
    pendingAskId: state.pendingAsk?.askId ?? "",
    messages: state.items.flatMap((i) =>
      i.type !== "message"
        ? []
        : [
            {
              id: i.id,
              role: upper("MESSAGE_ROLE_", i.role),
              kind: i.kind,
              text: i.text,
              partial: i.partial,
              checkpointId: i.checkpointId,
              ...(i.toolCall
                ? {
                    toolCall: {
                      toolCallId: i.toolCall.toolCallId,
                      status: upper("TOOL_CALL_STATUS_", i.toolCall.status),
                      edits: i.toolCall.edits.map((e) => editView(e.path, upper("FILE_STATUS_", e.status))),
                    },
                  }
                : {}),
            },
          ],
    ),
  };
}
