import torch
import torch.nn as nn

torch.set_grad_enabled(False)  # nothing is trained here: print() shows values without grad_fn
