"""``python -m reassignd.feeder plan ...`` (also the entry for ``spark-submit``):
``spark-submit --master spark://host:7077 reassignd/feeder/__main__.py plan ...``."""

from reassignd.feeder.command_line import main

if __name__ == "__main__":
    main()
