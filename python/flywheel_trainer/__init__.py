"""Flywheel's PyTorch trainer: an external worker that takes Flywheel's training jobs over the
worker protocol (/v1/worker) and trains them with Hugging Face transformers + PEFT LoRA, with
Flywheel's losses, optimizer and checkpoint layout, on one device or several ranks (torchrun)."""

__version__ = "0.1.0"
