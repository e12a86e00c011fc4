package dev.dline.client

/**
 * The sidecar could not be found, started, or did not hand shake. The message says why.
 * [permanent]: trying again cannot help until something changes (the binary is missing, not
 * executable, not a program for this machine, or speaks another protocol), so the supervisor
 * reports it at once instead of retrying.
 */
class SidecarStartException(message: String, cause: Throwable? = null, val permanent: Boolean = false) : Exception(message, cause)
