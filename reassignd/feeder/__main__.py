"""``python -m reassignd.feeder plan ...`` (also the script ``spark-submit`` runs:
``spark-submit --master spark://host:7077 reassignd/feeder/__main__.py plan ...``): the same
command as ``reassignd feed ...``, through the one command-line engine."""

import sys

from reassignd.cli import main

if __name__ == "__main__":
    main(["feed", *sys.argv[1:]])
