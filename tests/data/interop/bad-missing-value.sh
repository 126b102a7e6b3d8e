# a flag without its value
--num-layers 2 \
  --hidden-size
