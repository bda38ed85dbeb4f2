"""python -m components.kernels: build the kernel library if needed and say which is used."""
from components.kernels import status

print(status())
