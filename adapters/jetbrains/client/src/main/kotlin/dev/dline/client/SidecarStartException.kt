package dev.dline.client

/** The sidecar could not be found, started, or did not hand shake. The message says why. */
class SidecarStartException(message: String, cause: Throwable? = null) : Exception(message, cause)
