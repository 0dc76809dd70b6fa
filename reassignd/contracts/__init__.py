"""The public contracts, typed once, in a neutral place every side may import: what the event
stream carries (:mod:`.records`), the HTTP API's answer bodies (:mod:`.errors`, :mod:`.cluster`,
:mod:`.reassignments`, :mod:`.batches`, :mod:`.admin`), which the server encodes, the API client
decodes and the OpenAPI document's components are generated from, and the request bodies a
struct states fully (:mod:`.requests`). Pure: msgspec structs and the functions that read them."""
