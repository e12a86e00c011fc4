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
  type AuthenticateRequest,
  type AuthenticateResponse,
  type CloseSessionRequest,
  type CloseSessionResponse,
  type DeleteSessionRequest,
  type DeleteSessionResponse,
  type InitializeRequest,
  type InitializeResponse,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  type ResumeSessionRequest,
  type ResumeSessionResponse,
  type SetSessionConfigOptionRequest,
  type SetSessionConfigOptionResponse,
  type SetSessionModeRequest,
  type SetSessionModeResponse,
} from "@agentclientprotocol/sdk";
import type { App } from "../app.js";
import { ModelResolver, SET_UP_A_MODEL, TaskRuntime } from "../runtime/index.js";
import type { Logger } from "../logging/logger.js";
import { SERVER_VERSION } from "../version.js";
import { DlineError } from "../errors.js";
import { mapErrors, objectParams, toRequestError } from "./acp-errors.js";
import { registerCheckpointMethods } from "./checkpoint-methods.js";
import { clientEnvironment } from "./client-environment.js";
import { PromptTurn, type TurnSession } from "./prompt-turn.js";
import { promptText, replayUpdates } from "./session-updates.js";
import { visible } from "../text/visible-text.js";
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

function isFolder(folder: string): boolean {
  return path.isAbsolute(folder) && fs.existsSync(folder) && fs.statSync(folder).isDirectory();
}

function requireFolder(cwd: string): string {
  if (!path.isAbsolute(cwd)) throw RequestError.invalidParams(undefined, `cwd must be an absolute path, got "${cwd}"`);
  if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory())
    throw RequestError.invalidParams(undefined, `cwd ${cwd} is not a folder`);
  return path.resolve(cwd);
}

/**
 * The agent's sessions on one connection and what each ACP request does with them: one named
 * step per request, wired to its method by `dlineAgent`.
 */
class AcpSessions {
  private readonly logger: Logger;
  private readonly sessions = new Map<string, AcpSession>();
  private readonly models: ModelResolver;
  private readonly modes: SessionModes;
  private readonly sessionModels: SessionModels;
  private capabilities: ClientCapabilities | undefined;
  client: AgentContext | undefined;

  constructor(private readonly app: App) {
    this.logger = app.logger.child("acp");
    this.models = new ModelResolver(
      app.settings.stores.profiles,
      app.settings.stores.secrets,
      app.settings.resolver,
      app.settings.environmentProfile,
    );
    this.modes = new SessionModes(app.settings, app.layout);
    this.sessionModels = new SessionModels(app.settings, this.models, () => app.runtime());
  }

  initialize(params: InitializeRequest): InitializeResponse {
    this.capabilities = params.clientCapabilities;
    this.logger.info("initialize", { client: params.clientInfo?.name ?? "", protocolVersion: params.protocolVersion });
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
  }

  async authenticate(params: AuthenticateRequest): Promise<AuthenticateResponse> {
    if (params.methodId !== AUTH_METHOD_ID)
      throw RequestError.invalidParams(undefined, `unknown auth method ${params.methodId}`);
    await this.requireModel("");
    return {};
  }

  async newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    const cwd = requireFolder(params.cwd);
    const profileId = profileOf(params._meta);
    await this.requireModel(profileId);
    const session = await this.open(TaskRuntime.newTaskId(), cwd, profileId, false);
    await this.app.capabilities.setSessionMcpServers(session.id, params.mcpServers ?? []); // for the session's lifetime
    this.logger.info("session created", { sessionId: session.id });
    return { sessionId: session.id, ...(await this.sessionState(session)) };
  }

  async loadSession(params: LoadSessionRequest, peer: AgentContext): Promise<LoadSessionResponse> {
    const { session, record } = await this.openStored(params.sessionId, params.cwd);
    await this.app.capabilities.setSessionMcpServers(session.id, params.mcpServers ?? []);
    const view = (await this.app.tasks()).store.get(session.id);
    for (const update of replayUpdates(view.messages, record.workspaceRoot)) {
      await peer.notify(methods.client.session.update, { sessionId: session.id, update });
    }
    return this.sessionState(session);
  }

  async resumeSession(params: ResumeSessionRequest): Promise<ResumeSessionResponse> {
    const { session } = await this.openStored(params.sessionId, params.cwd);
    await this.app.capabilities.setSessionMcpServers(session.id, params.mcpServers ?? []);
    return this.sessionState(session);
  }

  async listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse> {
    const { history } = await this.app.tasks();
    const page = history.list({
      workspaceRoot: params.cwd ?? undefined,
      pageSize: LIST_PAGE_SIZE,
      pageToken: params.cursor ?? undefined,
    });
    return {
      sessions: page.tasks.map((t) => ({
        sessionId: t.id,
        cwd: t.workspaceRoot,
        title: visible(t.title),
        updatedAt: new Date(t.updatedAt).toISOString(),
        _meta: { dline: { status: t.status, favorite: t.favorite } },
      })),
      nextCursor: page.nextPageToken || null,
    };
  }

  async deleteSession(params: DeleteSessionRequest): Promise<DeleteSessionResponse> {
    const session = this.sessions.get(params.sessionId);
    await this.endSession(params.sessionId);
    const { history, deletion, watcher } = await this.app.tasks();
    if (!history.get(params.sessionId)) {
      if (session) return {}; // never prompted: nothing was stored
      throw RequestError.sessionNotFound(params.sessionId);
    }
    try {
      const result = await deletion.delete("selected", [params.sessionId]);
      const [refused] = result.refused;
      if (refused) throw RequestError.internalError({ dlineCode: "failed_precondition" }, refused.reason);
    } finally {
      watcher.poll();
    }
    return {};
  }

  async closeSession(params: CloseSessionRequest): Promise<CloseSessionResponse> {
    this.session(params.sessionId);
    await this.endSession(params.sessionId);
    return {};
  }

  async prompt(params: PromptRequest, signal: AbortSignal, peer: AgentContext): Promise<PromptResponse> {
    const session = this.session(params.sessionId);
    if (session.turn) throw RequestError.invalidRequest(undefined, "a prompt is already running in this session");
    const userText = promptText(params.prompt);
    if (!userText.trim()) throw RequestError.invalidParams(undefined, "the prompt has no text");
    const turn = await this.newTurn(session, peer);
    session.turn = turn;
    try {
      // A mode changed elsewhere (another editor, the settings) is announced before the turn.
      const changed = await this.modes.changed(session);
      if (changed)
        await peer.notify(methods.client.session.update, {
          sessionId: session.id,
          update: { sessionUpdate: "current_mode_update", currentModeId: changed },
        });
      if (!session.started) await this.modes.persistPending(session);
      return { stopReason: await turn.run(userText, signal) };
    } catch (err) {
      this.modes.discardPending(session);
      throw err;
    } finally {
      session.turn = undefined;
    }
  }

  async setMode(params: SetSessionModeRequest, peer: AgentContext): Promise<SetSessionModeResponse> {
    const session = this.session(params.sessionId);
    const mode = await this.modes.set(session, params.modeId);
    await peer.notify(methods.client.session.update, {
      sessionId: session.id,
      update: { sessionUpdate: "current_mode_update", currentModeId: mode },
    });
    return {};
  }

  async setConfigOption(params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse> {
    const session = this.session(params.sessionId);
    if (params.configId !== MODEL_CONFIG_ID || typeof params.value !== "string") {
      throw RequestError.invalidParams(
        undefined,
        `unknown config option "${String(params.configId).slice(0, 100)}"; the options are ${MODEL_CONFIG_ID}`,
      );
    }
    await this.sessionModels.set(session, params.value);
    return { configOptions: (await this.sessionModels.state(session)).configOptions ?? [] };
  }

  /** The model selector of clients of the earlier (unstable) model API. */
  async setModel(params: { sessionId: string; modelId: string }): Promise<Record<string, never>> {
    await this.sessionModels.set(this.session(params.sessionId), params.modelId);
    return {};
  }

  async cancel(sessionId: string): Promise<void> {
    await this.sessions.get(sessionId)?.turn?.cancel();
  }

  /** An open session of this connection, or session-not-found. */
  private session(sessionId: string): AcpSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  /** Modes and model options of a session, as session/new, load and resume answer them. */
  private async sessionState(session: AcpSession) {
    return { modes: await this.modes.state(session), ...(await this.sessionModels.state(session)) };
  }

  /** A model must be configured before a session can run: ACP's "authentication". */
  private async requireModel(profileId: string): Promise<void> {
    try {
      await this.models.resolve(profileId, "");
    } catch (err) {
      const reason = err instanceof DlineError ? err.errorReason : undefined;
      if (reason === "profile_not_found") throw toRequestError(err);
      throw RequestError.authRequired(
        { dlineCode: "failed_precondition", ...(reason ? { reason } : {}) },
        (err as Error).message,
      );
    }
  }

  /** The folder of a session open here whose first prompt has not come yet: no task exists. */
  folderBeforeFirstPrompt(sessionId: string): string | undefined {
    const session = this.sessions.get(sessionId);
    return session && !session.started ? session.cwd : undefined;
  }

  private async open(id: string, cwd: string, profileId: string, started: boolean): Promise<AcpSession> {
    const existing = this.sessions.get(id);
    if (existing?.turn) throw RequestError.invalidRequest(undefined, `session ${id} has a prompt running`);
    const session: AcpSession = {
      id,
      cwd,
      profileId,
      started,
      turn: undefined,
      approvals: { allowed: new Set(), rejected: new Set() },
      toolCallIds: new Set(),
    };
    this.sessions.set(id, session);
    (await this.app.runtime()).setApprovalOverlay(id, session.approvals);
    const client = this.client;
    const environment = client
      ? clientEnvironment({
          client,
          capabilities: this.capabilities,
          sessionId: id,
          onTerminal: (toolCallId, terminalId) => session.turn?.terminalStarted(toolCallId, terminalId),
        })
      : undefined;
    session.environment = environment;
    (await this.app.runtime()).setToolEnvironment(id, environment);
    return session;
  }

  /**
   * A session of the history (any client's), opened on this connection. It continues in its own
   * folder; one without a folder on this machine (imported without one, made elsewhere)
   * continues in the editor's `cwd`.
   */
  private async openStored(sessionId: string, editorCwd: string | undefined) {
    const { history } = await this.app.tasks();
    const record = history.get(sessionId);
    if (!record) throw RequestError.sessionNotFound(sessionId);
    const cwd = isFolder(record.workspaceRoot) || !editorCwd ? record.workspaceRoot : requireFolder(editorCwd);
    const session = await this.open(sessionId, cwd, "", true);
    return { session, record };
  }

  /** Stops a session's prompt and forgets it here: its editor I/O, its "always" answers, its session MCP servers. */
  private async endSession(sessionId: string): Promise<void> {
    await this.sessions.get(sessionId)?.turn?.cancel();
    this.sessions.delete(sessionId);
    const runtime = await this.app.runtime();
    runtime.setToolEnvironment(sessionId, undefined);
    runtime.setApprovalOverlay(sessionId, undefined);
    await this.app.capabilities.endSession(sessionId); // its session MCP servers stop
  }

  private async newTurn(session: AcpSession, peer: AgentContext): Promise<PromptTurn> {
    const { history } = await this.app.tasks();
    const contextWindow = await this.models.resolve(session.profileId, session.started ? session.id : "").then(
      (m) => m.contextWindow,
      () => undefined,
    );
    return new PromptTurn({
      runtime: await this.app.runtime(),
      client: this.client ?? peer,
      session,
      logger: this.logger,
      contextWindow,
      costBefore: history.get(session.id)?.cost ?? 0,
    });
  }
}

export function dlineAgent(app: App): AgentApp {
  const s = new AcpSessions(app);
  const acp = agent({ name: "dline" })
    .onConnect((connection) => {
      s.client = connection.client;
    })
    .onRequest(methods.agent.initialize, ({ params }) => s.initialize(params))
    .onRequest(methods.agent.authenticate, ({ params }) => mapErrors(() => s.authenticate(params)))
    .onRequest(methods.agent.session.new, ({ params }) => mapErrors(() => s.newSession(params)))
    .onRequest(methods.agent.session.load, ({ params, client: peer }) => mapErrors(() => s.loadSession(params, peer)))
    .onRequest(methods.agent.session.resume, ({ params }) => mapErrors(() => s.resumeSession(params)))
    .onRequest(methods.agent.session.list, ({ params }) => mapErrors(() => s.listSessions(params)))
    .onRequest(methods.agent.session.delete, ({ params }) => mapErrors(() => s.deleteSession(params)))
    .onRequest(methods.agent.session.close, ({ params }) => mapErrors(() => s.closeSession(params)))
    .onRequest(methods.agent.session.prompt, ({ params, signal, client: peer }) =>
      mapErrors(() => s.prompt(params, signal, peer)),
    )
    .onRequest(methods.agent.session.setMode, ({ params, client: peer }) => mapErrors(() => s.setMode(params, peer)))
    .onRequest(methods.agent.session.setConfigOption, ({ params }) => mapErrors(() => s.setConfigOption(params)))
    .onRequest("session/set_model", objectParams(["sessionId", "modelId"]), ({ params }) =>
      mapErrors(() => s.setModel(params)),
    )
    .onNotification(methods.agent.session.cancel, async ({ params }) => s.cancel(params.sessionId));
  registerCheckpointMethods(acp, app.checkpoints, (sessionId) => s.folderBeforeFirstPrompt(sessionId), app.taskRouter);
  return acp;
}
