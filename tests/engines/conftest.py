"""llama.cpp's tests run last: on a fresh machine its library is still compiling in the background
while the rest of the suite runs (Makefile `engines`)."""


def pytest_collection_modifyitems(config, items):
    late = [it for it in items if "llamacpp" in it.nodeid]
    if late:
        items[:] = [it for it in items if "llamacpp" not in it.nodeid] + late
