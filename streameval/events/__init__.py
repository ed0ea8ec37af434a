"""Events: the native models, the never-raising decoder, the UBI mapping, query normalization.

Import from the submodules (``streameval.events.models``, ``.decode``, ``.ubi``,
``.normalize``); this package stays empty so that importing one piece stays cheap.
"""
