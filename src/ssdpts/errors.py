"""The one exception type users see: a one-line message naming the problem and the fix."""


class SsdptsError(Exception):
    """A user-facing error. str(err) is printed as one line; the CLI exits with `exit_code`."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(" ".join(message.split()))
        if exit_code is not None:
            self.exit_code = exit_code
