// The storage folder's public surface: roots and InstanceLayout (every persisted path), settings,
// state, secrets, profiles, SQLite, atomic files and private modes. Other folders import only this file.
export { createSettingsDomain, type SettingsDomain } from "./settings-domain.js";
export {
  SettingsRegistry,
  SETTINGS,
  CAPABILITY_KINDS,
  type SettingScope,
  type SettingDeclaration,
} from "./settings-registry.js";
export { SettingsRepository, type SettingsSnapshot } from "./settings-repository.js";
export { SettingsStores, type ScopeTarget } from "./settings-stores.js";
export { StateStore, STATE_DEBOUNCE_MS } from "./state-store.js";
export { SecretsStore } from "./secrets-store.js";
export { ProfileCatalogRepository, type ProfileRecord } from "./profile-catalog.js";
export { SettingResolver, type ResolvedSetting, type SettingSourceName } from "./setting-resolver.js";
export { CapabilityToggles, type CapabilityToggleView, type ToggleState } from "./capability-toggles.js";
export { StorageMigrations, type HostStateImport, type ImportResult } from "./migrations.js";
export { FileLocks } from "./file-lock.js";
export { InstanceLayout } from "./instance-layout.js";
export { resolveStorageRoots, getDlineDataDir, getDlineHomePath, type StorageRoots } from "./roots.js";
export { SqliteFactory } from "./sqlite.js";
export { DiskReserve, freeBytesOn } from "./disk-reserve.js";
export {
  corruptCopyPath,
  isWriteInProgressTemp,
  moveAsideSync,
  writeFileAtomic,
  writeFileAtomicSync,
} from "./atomic-file.js";
export { assertKind } from "./capability-toggles.js";
export type { ToggleContext } from "./capability-toggles.js";
export type { EnvironmentProfile } from "./environment-profile.js";
export { assertSafeId, canonicalWorkspacePath, normaliseWorkspacePath } from "./instance-layout.js";
export type { TaskLayout } from "./instance-layout.js";
export {
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  mkdirPrivate,
  mkdirPrivateInExisting,
  narrowMode,
  securePrivateRoots,
} from "./private-mode.js";
export type { ProviderKind } from "./profile-catalog.js";
export { API_KEY } from "./secrets-store.js";
export type { CapabilityKind } from "./settings-registry.js";
export type { SqliteDatabase } from "./sqlite.js";
