"""nnplug.Error: what a failing acl or aclnn call raises."""


class Error(RuntimeError):
    """An acl/aclnn call returned a non-zero status.

    ``status`` is the call's status code (an ``ACLNN_*`` or ``ACL_ERROR_*`` value); the
    text is the runtime's message for the call (``aclGetRecentErrMsg``).
    """

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
