/**
 * The core as an ACP agent. An ACP session is a Dline task: the session id is the task id,
 * chosen at session/new; the task itself is created by the session's first prompt (a session
 * that never got a prompt leaves nothing behind). Sessions live in the same history as every
 * other task, so session/list, session/load and session/resume reach tasks started from any
 * editor, and tasks started here show up in every other client.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import {
  agent,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type AgentApp,
  type AgentContext,
  type ClientCapabilities,
  type ListSessionsResponse,
} from "@agentclientprotocol/sdk";
import type { App } from "../app.js";
import { ModelResolver, SET_UP_A_MODEL, TaskRuntime } from "../runtime/index.js";
import { SERVER_VERSION } from "../version.js";
import { DlineError } from "../errors.js";
import { mapErrors, objectParams, toRequestError } from "./acp-errors.js";
import { registerCheckpointMethods } from "./checkpoint-methods.js";
import { clientEnvironment } from "./client-environment.js";
import { PromptTurn, type TurnSession } from "./prompt-turn.js";
import { promptText, replayUpdates } from "./session-updates.js";
import { SessionModes, type ModeSession } from "./session-modes.js";
import { MODEL_CONFIG_ID, SessionModels } from "./session-models.js";

export const AUTH_METHOD_ID = "dline-model-profile";
const LIST_PAGE_SIZE = 50;

interface AcpSession extends TurnSession, ModeSession {
  turn: PromptTurn | undefined;
}

/** `_meta.dline.profileId` of session/new picks a model profile; "" is the default profile. */
function profileOf(meta: { [key: string]: unknown } | null | undefined): string {
  const dline = meta?.dline as { profileId?: unknown } | undefined;
  return typeof dline?.profileId === "string" ? dline.profileId : "";
}

function requireFolder(cwd: string): string {
  if (!path.isAbsolute(cwd)) throw RequestError.invalidParams(undefined, `cwd must be an absolute path, got "${cwd}"`);
  if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) throw RequestError.invalidParams(undefined, `cwd ${cwd} is not a folder`);
  return path.resolve(cwd);
}

export function dlineAgent(app: App): AgentApp {
  const logger = app.logger.child("acp");
  const sessions = new Map<string, AcpSession>();
  const models = new ModelResolver(app.settings.stores.profiles, app.settings.stores.secrets, app.settings.resolver, app.settings.environmentProfile);
  let capabilities: ClientCapabilities | undefined;
  let client: AgentContext | undefined;
  const modes = new SessionModes(app.settings, app.layout);
  const sessionModels = new SessionModels(app.settings, models, () => app.runtime());

  /** A model must be configured before a session can run: ACP's "authentication". */
  const requireModel = async (profileId: string) => {
    try {
      await models.resolve(profileId, "");
    } catch (err) {
      const reason = err instanceof DlineError ? err.errorReason : undefined;
      if (reason === "profile_not_found") throw toRequestError(err);
      throw RequestError.authRequired({ dlineCode: "failed_precondition", ...(reason ? { reason } : {}) }, (err as Error).message);
    }
  };

  const open = async (id: string, cwd: string, profileId: string, started: boolean): Promise<AcpSession> => {
    const existing = sessions.get(id);
    if (existing?.turn) throw RequestError.invalidRequest(undefined, `session ${id} has a prompt running`);
    const session: AcpSession = { id, cwd, profileId, started, turn: undefined, approvals: { allowed: new Set(), rejected: new Set() }, toolCallIds: new Set() };
    sessions.set(id, session);
    (await app.runtime()).setApprovalOverlay(id, session.approvals);
    const environment = client
      ? clientEnvironment({
          client,
          capabilities,
          sessionId: id,
          onTerminal: (toolCallId, terminalId) => session.turn?.terminalStarted(toolCallId, terminalId),
        })
      : undefined;
    session.environment = environment;
    (await app.runtime()).setToolEnvironment(id, environment);
    return session;
  };

  /** A session of the history (any client's), opened on this connection. */
  const openStored = async (sessionId: string) => {
    const { history } = await app.tasks();
    const record = history.get(sessionId);
    if (!record) throw RequestError.sessionNotFound(sessionId);
    const session = await open(sessionId, record.workspaceRoot, "", true);
    return { session, record };
  };

  const app_ = agent({ name: "dline" })
    .onConnect((connection) => {
      client = connection.client;
    })
    .onRequest(methods.agent.initialize, ({ params }) => {
      capabilities = params.clientCapabilities;
      logger.info("initialize", { client: params.clientInfo?.name ?? "", protocolVersion: params.protocolVersion });
      return {
        protocolVersion: Math.min(params.protocolVersion, PROTOCOL_VERSION),
        agentInfo: { name: "dline", title: "Dline", version: SERVER_VERSION },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { embeddedContext: true },
          sessionCapabilities: { list: {}, delete: {}, resume: {}, close: {} },
          mcpCapabilities: { http: true, sse: false }, // session MCP servers: stdio and streamable HTTP
          _meta: { dline: { checkpoints: true } },
        },
        authMethods: [
          {
            id: AUTH_METHOD_ID,
            name: "Dline model profile",
            description: `Dline needs a model: ${SET_UP_A_MODEL} (for example in the env of this agent's settings).`,
          },
        ],
      };
    })
    .onRequest(methods.agent.authenticate, ({ params }) =>
      mapErrors(async () => {
        if (params.methodId !== AUTH_METHOD_ID) throw RequestError.invalidParams(undefined, `unknown auth method ${params.methodId}`);
        await requireModel("");
        return {};
      }),
    )
    .onRequest(methods.agent.session.new, ({ params }) =>
      mapErrors(async () => {
        const cwd = requireFolder(params.cwd);
        const profileId = profileOf(params._meta);
        await requireModel(profileId);
        const session = await open(TaskRuntime.newTaskId(), cwd, profileId, false);
        await app.capabilities.setSessionMcpServers(session.id, params.mcpServers ?? []); // for the session's lifetime
        logger.info("session created", { sessionId: session.id });
        return { sessionId: session.id, modes: await modes.state(session), ...(await sessionModels.state(session)) };
      }),
    )
    .onRequest(methods.agent.session.load, ({ params, client: peer }) =>
      mapErrors(async () => {
        const { session, record } = await openStored(params.sessionId);
        await app.capabilities.setSessionMcpServers(session.id, params.mcpServers ?? []);
        const view = (await app.tasks()).store.get(session.id);
        for (const update of replayUpdates(view.messages, record.workspaceRoot)) {
          await peer.notify(methods.client.session.update, { sessionId: session.id, update });
        }
        return { modes: await modes.state(session), ...(await sessionModels.state(session)) };
      }),
    )
    .onRequest(methods.agent.session.resume, ({ params }) =>
      mapErrors(async () => {
        const { session } = await openStored(params.sessionId);
        await app.capabilities.setSessionMcpServers(session.id, params.mcpServers ?? []);
        return { modes: await modes.state(session), ...(await sessionModels.state(session)) };
      }),
    )
    .onRequest(methods.agent.session.list, ({ params }) =>
      mapErrors(async (): Promise<ListSessionsResponse> => {
        const { history } = await app.tasks();
        const page = history.list({ workspaceRoot: params.cwd ?? undefined, pageSize: LIST_PAGE_SIZE, pageToken: params.cursor ?? undefined });
        return {
          sessions: page.tasks.map((t) => ({
            sessionId: t.id,
            cwd: t.workspaceRoot,
            title: t.title,
            updatedAt: new Date(t.updatedAt).toISOString(),
            _meta: { dline: { status: t.status, favorite: t.favorite } },
          })),
          nextCursor: page.nextPageToken || null,
        };
      }),
    )
    .onRequest(methods.agent.session.delete, ({ params }) =>
      mapErrors(async () => {
        const session = sessions.get(params.sessionId);
        await session?.turn?.cancel();
        sessions.delete(params.sessionId);
        (await app.runtime()).setToolEnvironment(params.sessionId, undefined);
        (await app.runtime()).setApprovalOverlay(params.sessionId, undefined);
        await app.capabilities.endSession(params.sessionId); // its session MCP servers stop
        const { history, deletion, watcher } = await app.tasks();
        if (!history.get(params.sessionId)) {
          if (session) return {}; // never prompted: nothing was stored
          throw RequestError.sessionNotFound(params.sessionId);
        }
        try {
          const result = await deletion.delete("selected", [params.sessionId]);
          if (result.refused.length > 0) throw RequestError.internalError({ dlineCode: "failed_precondition" }, result.refused[0].reason);
        } finally {
          watcher.poll();
        }
        return {};
      }),
    )
    .onRequest(methods.agent.session.close, ({ params }) =>
      mapErrors(async () => {
        const session = sessions.get(params.sessionId);
        if (!session) throw RequestError.sessionNotFound(params.sessionId);
        await session.turn?.cancel();
        sessions.delete(params.sessionId);
        (await app.runtime()).setToolEnvironment(params.sessionId, undefined);
        (await app.runtime()).setApprovalOverlay(params.sessionId, undefined);
        await app.capabilities.endSession(params.sessionId); // its session MCP servers stop
        return {};
      }),
    )
    .onRequest(methods.agent.session.prompt, ({ params, signal, client: peer }) =>
      mapErrors(async () => {
        const session = sessions.get(params.sessionId);
        if (!session) throw RequestError.sessionNotFound(params.sessionId);
        if (session.turn) throw RequestError.invalidRequest(undefined, "a prompt is already running in this session");
        const userText = promptText(params.prompt);
        if (!userText.trim()) throw RequestError.invalidParams(undefined, "the prompt has no text");
        const { history } = await app.tasks();
        const contextWindow = await models
          .resolve(session.profileId, session.started ? session.id : "")
          .then((m) => m.contextWindow, () => undefined);
        const turn = new PromptTurn({
          runtime: await app.runtime(),
          client: client ?? peer,
          session,
          logger,
          contextWindow,
          costBefore: history.get(session.id)?.cost ?? 0,
        });
        session.turn = turn;
        try {
          // A mode changed elsewhere (another editor, the settings) is announced before the turn.
          const changed = await modes.changed(session);
          if (changed) await peer.notify(methods.client.session.update, { sessionId: session.id, update: { sessionUpdate: "current_mode_update", currentModeId: changed } });
          if (!session.started) await modes.persistPending(session);
          return { stopReason: await turn.run(userText, signal) };
        } catch (err) {
          modes.discardPending(session);
          throw err;
        } finally {
          session.turn = undefined;
        }
      }),
    )
    .onRequest(methods.agent.session.setMode, ({ params, client: peer }) =>
      mapErrors(async () => {
        const session = sessions.get(params.sessionId);
        if (!session) throw RequestError.sessionNotFound(params.sessionId);
        const mode = await modes.set(session, params.modeId);
        await peer.notify(methods.client.session.update, { sessionId: session.id, update: { sessionUpdate: "current_mode_update", currentModeId: mode } });
        return {};
      }),
    )
    .onRequest(methods.agent.session.setConfigOption, ({ params }) =>
      mapErrors(async () => {
        const session = sessions.get(params.sessionId);
        if (!session) throw RequestError.sessionNotFound(params.sessionId);
        if (params.configId !== MODEL_CONFIG_ID || typeof params.value !== "string") {
          throw RequestError.invalidParams(undefined, `unknown config option "${String(params.configId).slice(0, 100)}"; the options are ${MODEL_CONFIG_ID}`);
        }
        await sessionModels.set(session, params.value);
        return { configOptions: (await sessionModels.state(session)).configOptions ?? [] };
      }),
    )
    // The model selector of clients of the earlier (unstable) model API.
    .onRequest("session/set_model", objectParams(["sessionId", "modelId"]), ({ params }) =>
      mapErrors(async () => {
        const session = sessions.get(params.sessionId);
        if (!session) throw RequestError.sessionNotFound(params.sessionId);
        await sessionModels.set(session, params.modelId);
        return {};
      }),
    )
    .onNotification(methods.agent.session.cancel, async ({ params }) => {
      await sessions.get(params.sessionId)?.turn?.cancel();
    });
  registerCheckpointMethods(app_, app.checkpoints);
  return app_;
}
