"""The controller's HTTP API (aiohttp): routes, error mapping, auth, metrics.

Imported as ``reassignd.http`` — never as a top-level ``http``, which would shadow the standard
library module aiohttp itself imports.

Nothing is imported here: a module that needs one part (the tokens file reader, say) does not
pull in the server, its routes and aiohttp with it (the command line reads the tokens file).
"""
