"""Pure physics of the marine-cosim components: numpy/scipy only, no FMI."""
