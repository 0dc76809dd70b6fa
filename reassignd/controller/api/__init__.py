"""What other layers may ask of a controller instance: the port the HTTP layer and the Kafka
listener are written against (``port.ControllerView``) and its implementation (``ControllerApi``)."""
