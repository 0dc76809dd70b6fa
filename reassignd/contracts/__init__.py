"""The public contracts, typed once, in a neutral place every side may import: what the event
stream carries (:mod:`.records`). Pure: msgspec structs and the functions that read them."""
