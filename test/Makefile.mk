# test/: unit tests are declared by their module's fragment; MPI and app tests run from here.
