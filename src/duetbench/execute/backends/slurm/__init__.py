"""Running a campaign's planned runs as a Slurm array job: one whole node per task.

`client` talks to Slurm through its stable command-line interface (sbatch, squeue, scontrol, scancel;
never sacct, which needs slurmdbd); `split` divides a plan into the tasks' shares; `job` is the
attempt directory on the shared filesystem that the submitting host and the tasks both read.
"""
