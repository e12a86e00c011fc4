// signal-exit installs process signal listeners when first called, and proper-lockfile calls it
// as it loads. A start-up snapshot cannot hold signal handles, so while the snapshot is being
// built the registration is replayed once the snapshot is deserialised (at every start).
const v8 = require("node:v8");

let real;
const load = () => (real ??= require("signal-exit-at-run-time"));

module.exports = function onExit(callback, options) {
  if (v8.startupSnapshot?.isBuildingSnapshot()) {
    let remove;
    v8.startupSnapshot.addDeserializeCallback(() => {
      remove = load()(callback, options);
    });
    return () => remove?.();
  }
  return load()(callback, options);
};
