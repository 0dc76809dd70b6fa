"""``python -m reassignd`` is the ``reassignd`` console script."""

from reassignd.cli import main

if __name__ == "__main__":
    main()
