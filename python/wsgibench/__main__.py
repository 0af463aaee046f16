"""`python -m wsgibench`: the command line."""

if __name__ == "__main__":
    from wsgibench.cli import main

    main()
